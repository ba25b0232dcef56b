; program: examples/axpy.teil
; obligation: reads-in-bounds-stmt1
; lemma: Lemma 4.3, Theorem 4.4; report Lemma 2, Corollary 1
; statement: 1: z = add (mul a x) y
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun n! () Int)
(declare-fun k1!0 () Int)
(assert (>= n! 1))
(assert (let ((a!1 (and (and (>= k1!0 1) (<= k1!0 n!))
                (not (and (>= k1!0 1) (<= k1!0 n!))))))
  (or a!1 a!1)))
(check-sat)
