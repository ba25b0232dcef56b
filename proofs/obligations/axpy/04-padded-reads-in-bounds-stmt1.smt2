; program: examples/axpy.teil
; obligation: padded-reads-in-bounds-stmt1
; lemma: report Lemma 5(i), Theorem 2, Corollary 3
; statement: 1: z = add (mul a x) y
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun n! () Int)
(declare-fun n!q8 () Int)
(declare-fun k1!0 () Int)
(assert (>= n! 1))
(assert (< (* 8 (- n!q8 1)) n!))
(assert (<= n! (* 8 n!q8)))
(assert (let ((a!1 (not (and (>= k1!0 1) (<= k1!0 (* 8 n!q8))))))
(let ((a!2 (and (and (>= k1!0 1) (<= k1!0 (* 8 n!q8))) a!1)))
  (or a!2 a!2))))
(check-sat)
