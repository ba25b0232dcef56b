; program: examples/normalize.teil
; obligation: padded-store-initial
; lemma: report Lemma 4 (d-pad-var)
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-datatypes ((Value 0)) (((val (real Real)) (undef))))
(declare-fun n! () Int)
(declare-fun n!q8 () Int)
(declare-fun mu_p! (Int) Value)
(declare-fun p_p!1 () Int)
(declare-fun mu_x! (Int) Value)
(declare-fun p_x!1 () Int)
(assert (>= n! 1))
(assert (< (* 8 (- n!q8 1)) n!))
(assert (<= n! (* 8 n!q8)))
(assert (let ((a!1 (ite (<= p_x!1 n!) (mu_x! (ite (<= p_x!1 n!) p_x!1 n!)) (val 0.0)))
      (a!3 (= (mu_x! (ite (<= p_x!1 n!) p_x!1 n!)) undef))
      (a!5 (ite (<= p_p!1 n!) (mu_p! (ite (<= p_p!1 n!) p_p!1 n!)) (val 0.0)))
      (a!7 (= (mu_p! (ite (<= p_p!1 n!) p_p!1 n!)) undef)))
(let ((a!2 (= a!1 (mu_x! (ite (<= p_x!1 n!) p_x!1 n!))))
      (a!6 (= a!5 (mu_p! (ite (<= p_p!1 n!) p_p!1 n!)))))
(let ((a!4 (ite (and (>= p_x!1 1) (<= p_x!1 n!))
                a!2
                (or (= a!1 (val 0.0)) (and (= a!1 undef) a!3))))
      (a!8 (ite (and (>= p_p!1 1) (<= p_p!1 n!))
                a!6
                (or (= a!5 (val 0.0)) (and (= a!5 undef) a!7)))))
  (or (and (>= p_x!1 1) (<= p_x!1 (* 8 n!q8)) (not a!4))
      (and (>= p_p!1 1) (<= p_p!1 (* 8 n!q8)) (not a!8)))))))
(check-sat)
