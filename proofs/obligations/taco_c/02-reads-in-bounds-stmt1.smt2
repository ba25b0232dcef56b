; program: examples/taco_c.teil
; obligation: reads-in-bounds-stmt1
; lemma: Lemma 4.3, Theorem 4.4; report Lemma 2, Corollary 1
; statement: 1: A = red 1 (diag 3 4 (prod B C))
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun l () Int)
(declare-fun m () Int)
(declare-fun n () Int)
(declare-fun k2!1 () Int)
(declare-fun m!2 () Int)
(declare-fun k1!0 () Int)
(assert (>= l 1))
(assert (>= m 1))
(assert (>= n 1))
(assert (let ((a!1 (not (and (and (>= m!2 1) (<= m!2 n))
                     (and (>= k1!0 1) (<= k1!0 m))
                     (and (>= k2!1 1) (<= k2!1 l)))))
      (a!2 (not (and (and (>= k2!1 1) (<= k2!1 l))))))
  (or (and (and (>= k1!0 1) (<= k1!0 m))
           (and (>= k2!1 1) (<= k2!1 l))
           (and (>= m!2 1) (<= m!2 n))
           a!1)
      (and (and (>= k1!0 1) (<= k1!0 m))
           (and (>= k2!1 1) (<= k2!1 l))
           (and (>= m!2 1) (<= m!2 n))
           a!2))))
(check-sat)
