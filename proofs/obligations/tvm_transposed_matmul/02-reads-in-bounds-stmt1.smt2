; program: examples/tvm_transposed_matmul.teil
; obligation: reads-in-bounds-stmt1
; lemma: Lemma 4.3, Theorem 4.4; report Lemma 2, Corollary 1
; statement: 1: C = contr 1 3 (prod A B)
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun m () Int)
(declare-fun n () Int)
(declare-fun h () Int)
(declare-fun k2!1 () Int)
(declare-fun m!2 () Int)
(declare-fun k1!0 () Int)
(assert (>= m 1))
(assert (>= n 1))
(assert (>= h 1))
(assert (let ((a!1 (not (and (and (>= m!2 1) (<= m!2 h)) (and (>= k1!0 1) (<= k1!0 m)))))
      (a!3 (not (and (and (>= m!2 1) (<= m!2 h)) (and (>= k2!1 1) (<= k2!1 n))))))
(let ((a!2 (and (and (and (>= k1!0 1) (<= k1!0 m)))
                (and (and (>= k2!1 1) (<= k2!1 n)))
                (and (>= m!2 1) (<= m!2 h))
                a!1))
      (a!4 (and (and (and (>= k1!0 1) (<= k1!0 m)))
                (and (and (>= k2!1 1) (<= k2!1 n)))
                (and (>= m!2 1) (<= m!2 h))
                a!3)))
  (or a!2 a!4))))
(check-sat)
