"""The fast engine: the planner reads the semantics on index labels, ``plan_check`` proves each
plan's index maps in bounds, and the Cython kernels run it without bounds checks (issue 5);
``emit_c`` writes the same semantics as standalone C, every access proved in bounds (issue 15)."""
