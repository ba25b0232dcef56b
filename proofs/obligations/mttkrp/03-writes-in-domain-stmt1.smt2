; program: examples/mttkrp.teil
; obligation: writes-in-domain-stmt1
; lemma: Lemma 4.5, Theorem 4.6; report Theorem 1, Corollary 2
; statement: 1: A = diag 2 3 (contr 2 4 (contr 2 4 (prod B (prod C D))))
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun I! () Int)
(declare-fun J! () Int)
(declare-fun K! () Int)
(declare-fun L! () Int)
(declare-fun k2!1 () Int)
(declare-fun k1!0 () Int)
(assert (>= I! 1))
(assert (>= J! 1))
(assert (>= K! 1))
(assert (>= L! 1))
(assert (let ((a!1 (and (>= k1!0 1) (<= k1!0 I!) (>= k2!1 1) (<= k2!1 J!))))
  (or (xor a!1 a!1))))
(check-sat)
