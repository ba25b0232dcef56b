; program: examples/fig11_proj_expa.teil
; obligation: reads-in-bounds-stmt1
; lemma: Lemma 4.3, Theorem 4.4; report Lemma 2, Corollary 1
; statement: 1: C = add A (proj 1 2 B)
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun k () Int)
(declare-fun m () Int)
(declare-fun n () Int)
(declare-fun k2!1 () Int)
(declare-fun k1!0 () Int)
(assert (>= k 1))
(assert (>= m 1))
(assert (>= n 1))
(assert (>= (+ 0 (* 1 k)) (+ 0 2)))
(assert (let ((a!1 (not (and (and (>= k1!0 1) (<= k1!0 m))
                     (and (>= k2!1 1) (<= k2!1 n)))))
      (a!2 (not (and (>= 2 1)
                     (<= 2 k)
                     (and (>= k1!0 1) (<= k1!0 m))
                     (and (>= k2!1 1) (<= k2!1 n))))))
  (or (and (and (>= k1!0 1) (<= k1!0 m)) (and (>= k2!1 1) (<= k2!1 n)) a!1)
      (and (and (>= k1!0 1) (<= k1!0 m)) (and (>= k2!1 1) (<= k2!1 n)) a!2))))
(check-sat)
