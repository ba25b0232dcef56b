; program: examples/tvm_transposed_matmul.teil
; obligation: writes-in-domain-stmt1
; lemma: Lemma 4.5, Theorem 4.6; report Theorem 1, Corollary 2
; statement: 1: C = contr 1 3 (prod A B)
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun m! () Int)
(declare-fun n! () Int)
(declare-fun h! () Int)
(declare-fun k2!1 () Int)
(declare-fun k1!0 () Int)
(assert (>= m! 1))
(assert (>= n! 1))
(assert (>= h! 1))
(assert (let ((a!1 (and (>= k1!0 1) (<= k1!0 m!) (>= k2!1 1) (<= k2!1 n!))))
  (or (xor a!1 a!1))))
(check-sat)
