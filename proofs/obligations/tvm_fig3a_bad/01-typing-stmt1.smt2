; program: examples/tvm_fig3a_bad.teil
; obligation: typing-stmt1
; lemma: Lemma 4.1; report 3.2.1
; statement: 1: C = red 1 (diag 1 3 (prod A B))
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun m! () Int)
(declare-fun n! () Int)
(declare-fun h! () Int)
(assert (>= m! 1))
(assert (>= n! 1))
(assert (>= h! 1))
(assert (or (not (= m! n!)) (not (= m! h!)) (not (= n! h!))))
(check-sat)
