; program: examples/bmm.teil
; obligation: writes-in-domain-stmt1
; lemma: Lemma 4.5, Theorem 4.6; report Theorem 1, Corollary 2
; statement: 1: C = contr 3 4 (diag 1 4 (prod A B))
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun nb! () Int)
(declare-fun ni! () Int)
(declare-fun nj! () Int)
(declare-fun nk! () Int)
(declare-fun k3!2 () Int)
(declare-fun k2!1 () Int)
(declare-fun k1!0 () Int)
(assert (>= nb! 1))
(assert (>= ni! 1))
(assert (>= nj! 1))
(assert (>= nk! 1))
(assert (let ((a!1 (and (>= k1!0 1)
                (<= k1!0 nb!)
                (>= k2!1 1)
                (<= k2!1 ni!)
                (>= k3!2 1)
                (<= k3!2 nj!))))
  (or (xor a!1 a!1))))
(check-sat)
