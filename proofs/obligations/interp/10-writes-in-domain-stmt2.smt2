; program: examples/interp.teil
; obligation: writes-in-domain-stmt2
; lemma: Lemma 4.5, Theorem 4.6; report Theorem 1, Corollary 2
; statement: 2: t2 = contr 2 6 (prod t1 A)
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun E! () Int)
(declare-fun m! () Int)
(declare-fun n! () Int)
(declare-fun k4!3 () Int)
(declare-fun k3!2 () Int)
(declare-fun k2!1 () Int)
(declare-fun k1!0 () Int)
(assert (>= E! 1))
(assert (>= m! 1))
(assert (>= n! 1))
(assert (let ((a!1 (and (>= k1!0 1)
                (<= k1!0 E!)
                (>= k2!1 1)
                (<= k2!1 n!)
                (>= k3!2 1)
                (<= k3!2 m!)
                (>= k4!3 1)
                (<= k4!3 m!))))
  (or (xor a!1 a!1))))
(check-sat)
