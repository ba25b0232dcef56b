; program: examples/interp_nested.teil
; obligation: padded-reads-in-bounds-stmt1
; lemma: report Lemma 5(i), Theorem 2, Corollary 3
; statement: 1: v = contr 2 6 (contr 2 6 (contr 2 6 (prod u (prod A (prod A A)))))
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun E! () Int)
(declare-fun m! () Int)
(declare-fun n! () Int)
(declare-fun E!q8 () Int)
(declare-fun m!q8 () Int)
(declare-fun n!q8 () Int)
(declare-fun m!4 () Int)
(declare-fun k4!3 () Int)
(declare-fun m!6 () Int)
(declare-fun m!5 () Int)
(declare-fun k3!2 () Int)
(declare-fun k2!1 () Int)
(declare-fun k1!0 () Int)
(assert (>= E! 1))
(assert (>= m! 1))
(assert (>= n! 1))
(assert (< (* 8 (- E!q8 1)) E!))
(assert (<= E! (* 8 E!q8)))
(assert (< (* 8 (- m!q8 1)) m!))
(assert (<= m! (* 8 m!q8)))
(assert (< (* 8 (- n!q8 1)) n!))
(assert (<= n! (* 8 n!q8)))
(assert (let ((a!1 (and (and (>= k1!0 1) (<= k1!0 (* 8 E!q8)))))
      (a!2 (and (and (>= k2!1 1) (<= k2!1 (* 8 m!q8)))))
      (a!3 (and (and (>= k3!2 1) (<= k3!2 (* 8 m!q8)))))
      (a!4 (and (and (>= k4!3 1) (<= k4!3 (* 8 m!q8)))))
      (a!5 (and (and (>= k1!0 1) (<= k1!0 (* 8 E!q8)))
                (and (>= m!6 1) (<= m!6 (* 8 n!q8)))
                (and (>= m!5 1) (<= m!5 (* 8 n!q8)))
                (and (>= m!4 1) (<= m!4 (* 8 n!q8)))))
      (a!7 (and (and (>= k2!1 1) (<= k2!1 (* 8 m!q8)))
                (and (>= m!6 1) (<= m!6 (* 8 n!q8)))))
      (a!9 (and (and (>= k3!2 1) (<= k3!2 (* 8 m!q8)))
                (and (>= m!5 1) (<= m!5 (* 8 n!q8)))))
      (a!11 (and (and (>= k4!3 1) (<= k4!3 (* 8 m!q8)))
                 (and (>= m!4 1) (<= m!4 (* 8 n!q8))))))
(let ((a!6 (and a!1
                a!2
                a!3
                a!4
                (and (>= m!4 1) (<= m!4 (* 8 n!q8)))
                (and (>= m!5 1) (<= m!5 (* 8 n!q8)))
                (and (>= m!6 1) (<= m!6 (* 8 n!q8)))
                (not a!5)))
      (a!8 (and a!1
                a!2
                a!3
                a!4
                (and (>= m!4 1) (<= m!4 (* 8 n!q8)))
                (and (>= m!5 1) (<= m!5 (* 8 n!q8)))
                (and (>= m!6 1) (<= m!6 (* 8 n!q8)))
                (not a!7)))
      (a!10 (and a!1
                 a!2
                 a!3
                 a!4
                 (and (>= m!4 1) (<= m!4 (* 8 n!q8)))
                 (and (>= m!5 1) (<= m!5 (* 8 n!q8)))
                 (and (>= m!6 1) (<= m!6 (* 8 n!q8)))
                 (not a!9)))
      (a!12 (and a!1
                 a!2
                 a!3
                 a!4
                 (and (>= m!4 1) (<= m!4 (* 8 n!q8)))
                 (and (>= m!5 1) (<= m!5 (* 8 n!q8)))
                 (and (>= m!6 1) (<= m!6 (* 8 n!q8)))
                 (not a!11))))
  (or a!6 a!8 a!10 a!12))))
(check-sat)
