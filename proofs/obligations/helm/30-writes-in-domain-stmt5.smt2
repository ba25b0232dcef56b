; program: examples/helm.teil
; obligation: writes-in-domain-stmt5
; lemma: Lemma 4.5, Theorem 4.6; report Theorem 1, Corollary 2
; statement: 5: v = contr 2 5 (prod r S)
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun E! () Int)
(declare-fun n! () Int)
(declare-fun k4!3 () Int)
(declare-fun k3!2 () Int)
(declare-fun k2!1 () Int)
(declare-fun k1!0 () Int)
(assert (>= E! 1))
(assert (>= n! 1))
(assert (let ((a!1 (and (>= k1!0 1)
                (<= k1!0 E!)
                (>= k2!1 1)
                (<= k2!1 n!)
                (>= k3!2 1)
                (<= k3!2 n!)
                (>= k4!3 1)
                (<= k4!3 n!))))
  (or (xor a!1 a!1))))
(check-sat)
