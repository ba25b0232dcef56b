; program: examples/fig11_proj_expa.teil
; obligation: typing-stmt1
; lemma: Lemma 4.1; report 3.2.1
; statement: 1: C = add A (proj 1 2 B)
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun k! () Int)
(declare-fun m! () Int)
(declare-fun n! () Int)
(assert (>= k! 1))
(assert (>= m! 1))
(assert (>= n! 1))
(assert (>= (+ 0 (* 1 k!)) (+ 0 2)))
(assert (or (not (<= 2 k!))))
(check-sat)
