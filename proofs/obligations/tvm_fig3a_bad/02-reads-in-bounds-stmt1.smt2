; program: examples/tvm_fig3a_bad.teil
; obligation: reads-in-bounds-stmt1
; lemma: Lemma 4.3, Theorem 4.4; report Lemma 2, Corollary 1
; statement: 1: C = red 1 (diag 1 3 (prod A B))
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun m! () Int)
(declare-fun n! () Int)
(declare-fun h! () Int)
(declare-fun k2!1 () Int)
(declare-fun m!2 () Int)
(declare-fun k1!0 () Int)
(assert (>= m! 1))
(assert (>= n! 1))
(assert (>= h! 1))
(assert (let ((a!1 (not (and (and (>= m!2 1) (<= m!2 m!)) (>= k1!0 1) (<= k1!0 h!))))
      (a!2 (and (and (>= k1!0 1) (<= k1!0 m!))
                (and (>= k2!1 1) (<= k2!1 n!))
                (and (>= m!2 1) (<= m!2 m!))
                (not (and (>= m!2 1) (<= m!2 n!) (>= k2!1 1) (<= k2!1 h!))))))
  (or (and (and (>= k1!0 1) (<= k1!0 m!))
           (and (>= k2!1 1) (<= k2!1 n!))
           (and (>= m!2 1) (<= m!2 m!))
           a!1)
      a!2)))
(check-sat)
