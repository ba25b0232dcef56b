; program: examples/mttkrp.teil
; obligation: padded-reads-in-bounds-stmt1
; lemma: report Lemma 5(i), Theorem 2, Corollary 3
; statement: 1: A = diag 2 3 (contr 2 4 (contr 2 4 (prod B (prod C D))))
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun I! () Int)
(declare-fun J! () Int)
(declare-fun K! () Int)
(declare-fun L! () Int)
(declare-fun I!q8 () Int)
(declare-fun J!q8 () Int)
(declare-fun K!q8 () Int)
(declare-fun L!q8 () Int)
(declare-fun k2!1 () Int)
(declare-fun m!2 () Int)
(declare-fun m!3 () Int)
(declare-fun k1!0 () Int)
(assert (>= I! 1))
(assert (>= J! 1))
(assert (>= K! 1))
(assert (>= L! 1))
(assert (< (* 8 (- I!q8 1)) I!))
(assert (<= I! (* 8 I!q8)))
(assert (< (* 8 (- J!q8 1)) J!))
(assert (<= J! (* 8 J!q8)))
(assert (< (* 8 (- K!q8 1)) K!))
(assert (<= K! (* 8 K!q8)))
(assert (< (* 8 (- L!q8 1)) L!))
(assert (<= L! (* 8 L!q8)))
(assert (let ((a!1 (and (and (>= k1!0 1) (<= k1!0 (* 8 I!q8)))))
      (a!2 (and (and (>= k2!1 1) (<= k2!1 (* 8 J!q8)))))
      (a!3 (and (and (>= k1!0 1) (<= k1!0 (* 8 I!q8)))
                (and (>= m!3 1) (<= m!3 (* 8 K!q8)))
                (and (>= m!2 1) (<= m!2 (* 8 L!q8)))))
      (a!5 (and (and (>= m!3 1) (<= m!3 (* 8 K!q8)))
                (and (>= k2!1 1) (<= k2!1 (* 8 J!q8)))))
      (a!7 (and (and (>= m!2 1) (<= m!2 (* 8 L!q8)))
                (and (>= k2!1 1) (<= k2!1 (* 8 J!q8))))))
(let ((a!4 (and a!1
                a!2
                (and (>= m!2 1) (<= m!2 (* 8 L!q8)))
                (and (>= m!3 1) (<= m!3 (* 8 K!q8)))
                (not a!3)))
      (a!6 (and a!1
                a!2
                (and (>= m!2 1) (<= m!2 (* 8 L!q8)))
                (and (>= m!3 1) (<= m!3 (* 8 K!q8)))
                (not a!5)))
      (a!8 (and a!1
                a!2
                (and (>= m!2 1) (<= m!2 (* 8 L!q8)))
                (and (>= m!3 1) (<= m!3 (* 8 K!q8)))
                (not a!7))))
  (or a!4 a!6 a!8))))
(check-sat)
