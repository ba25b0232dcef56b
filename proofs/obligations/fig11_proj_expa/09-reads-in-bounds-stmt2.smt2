; program: examples/fig11_proj_expa.teil
; obligation: reads-in-bounds-stmt2
; lemma: Lemma 4.3, Theorem 4.4; report Lemma 2, Corollary 1
; statement: 2: D = add (expa 1 k A) B
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun k! () Int)
(declare-fun m! () Int)
(declare-fun n! () Int)
(declare-fun k3!2 () Int)
(declare-fun k2!1 () Int)
(declare-fun k1!0 () Int)
(assert (>= k! 1))
(assert (>= m! 1))
(assert (>= n! 1))
(assert (>= (+ 0 (* 1 k!)) (+ 0 2)))
(assert (let ((a!1 (not (and (and (>= k2!1 1) (<= k2!1 m!))
                     (and (>= k3!2 1) (<= k3!2 n!)))))
      (a!3 (not (and (and (>= k1!0 1) (<= k1!0 k!))
                     (and (>= k2!1 1) (<= k2!1 m!))
                     (and (>= k3!2 1) (<= k3!2 n!))))))
(let ((a!2 (and (and (and (>= k1!0 1) (<= k1!0 k!)))
                (and (and (>= k2!1 1) (<= k2!1 m!)))
                (and (and (>= k3!2 1) (<= k3!2 n!)))
                a!1))
      (a!4 (and (and (and (>= k1!0 1) (<= k1!0 k!)))
                (and (and (>= k2!1 1) (<= k2!1 m!)))
                (and (and (>= k3!2 1) (<= k3!2 n!)))
                a!3)))
  (or a!2 a!4))))
(check-sat)
