; program: examples/fig11_proj_expa.teil
; obligation: writes-in-domain-stmt2
; lemma: Lemma 4.5, Theorem 4.6; report Theorem 1, Corollary 2
; statement: 2: D = add (expa 1 k A) B
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun k! () Int)
(declare-fun m! () Int)
(declare-fun n! () Int)
(declare-fun k3!2 () Int)
(declare-fun k2!1 () Int)
(declare-fun k1!0 () Int)
(assert (>= k! 1))
(assert (>= m! 1))
(assert (>= n! 1))
(assert (>= (+ 0 (* 1 k!)) (+ 0 2)))
(assert (let ((a!1 (and (>= k1!0 1)
                (<= k1!0 k!)
                (>= k2!1 1)
                (<= k2!1 m!)
                (>= k3!2 1)
                (<= k3!2 n!))))
  (or (xor a!1 a!1))))
(check-sat)
