; program: examples/fig11_proj_expa.teil
; obligation: writes-in-domain-stmt1
; lemma: Lemma 4.5, Theorem 4.6; report Theorem 1, Corollary 2
; statement: 1: C = add A (proj 1 2 B)
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun k! () Int)
(declare-fun m! () Int)
(declare-fun n! () Int)
(declare-fun k2!1 () Int)
(declare-fun k1!0 () Int)
(assert (>= k! 1))
(assert (>= m! 1))
(assert (>= n! 1))
(assert (>= (+ 0 (* 1 k!)) (+ 0 2)))
(assert (let ((a!1 (and (>= k1!0 1) (<= k1!0 m!) (>= k2!1 1) (<= k2!1 n!))))
  (or (xor a!1 a!1))))
(check-sat)
