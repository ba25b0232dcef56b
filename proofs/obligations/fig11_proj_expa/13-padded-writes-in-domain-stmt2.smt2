; program: examples/fig11_proj_expa.teil
; obligation: padded-writes-in-domain-stmt2
; lemma: report Theorem 2, Corollary 3
; statement: 2: D = add (expa 1 k A) B
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun k! () Int)
(declare-fun m! () Int)
(declare-fun n! () Int)
(declare-fun k!q8 () Int)
(declare-fun m!q8 () Int)
(declare-fun n!q8 () Int)
(declare-fun k3!2 () Int)
(declare-fun k2!1 () Int)
(declare-fun k1!0 () Int)
(assert (>= k! 1))
(assert (>= m! 1))
(assert (>= n! 1))
(assert (>= (+ 0 (* 1 k!)) (+ 0 2)))
(assert (< (* 8 (- k!q8 1)) k!))
(assert (<= k! (* 8 k!q8)))
(assert (< (* 8 (- m!q8 1)) m!))
(assert (<= m! (* 8 m!q8)))
(assert (< (* 8 (- n!q8 1)) n!))
(assert (<= n! (* 8 n!q8)))
(assert (let ((a!1 (and (>= k1!0 1)
                (<= k1!0 (* 8 k!q8))
                (>= k2!1 1)
                (<= k2!1 (* 8 m!q8))
                (>= k3!2 1)
                (<= k3!2 (* 8 n!q8)))))
  (or (xor a!1 a!1))))
(check-sat)
