; program: examples/normalize.teil
; obligation: reads-in-bounds-stmt2
; lemma: Lemma 4.3, Theorem 4.4; report Lemma 2, Corollary 1
; statement: 2: p = div x (red x)
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun n! () Int)
(declare-fun m!1 () Int)
(declare-fun k1!0 () Int)
(assert (>= n! 1))
(assert (let ((a!1 (and (and (>= k1!0 1) (<= k1!0 n!))
                (not (and (>= k1!0 1) (<= k1!0 n!)))))
      (a!2 (not (and (and (>= m!1 1) (<= m!1 n!))))))
  (or a!1 (and (and (>= k1!0 1) (<= k1!0 n!)) (and (>= m!1 1) (<= m!1 n!)) a!2))))
(check-sat)
