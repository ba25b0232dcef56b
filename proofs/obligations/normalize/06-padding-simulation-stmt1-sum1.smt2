; program: examples/normalize.teil
; obligation: padding-simulation-stmt1-sum1
; lemma: report Lemma 6 (contraction case), Lemma 5(ii)
; statement: 1: s = red x
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-datatypes ((Value 0)) (((val (real Real)) (undef))))
(declare-fun n! () Int)
(declare-fun n!q8 () Int)
(declare-fun mu_x! (Int) Value)
(declare-fun m!0 () Int)
(declare-fun pmu_x! (Int) Value)
(assert (>= n! 1))
(assert (< (* 8 (- n!q8 1)) n!))
(assert (<= n! (* 8 n!q8)))
(assert (let ((a!1 (= (pmu_x! m!0) (mu_x! (ite (<= m!0 n!) m!0 n!))))
      (a!2 (= (mu_x! (ite (<= m!0 n!) m!0 n!)) undef)))
(let ((a!3 (or (= (pmu_x! m!0) (val 0.0)) (and (= (pmu_x! m!0) undef) a!2))))
  (=> (and (>= m!0 1) (<= m!0 (* 8 n!q8)))
      (ite (and (>= m!0 1) (<= m!0 n!)) a!1 a!3)))))
(assert (let ((a!1 (= (pmu_x! m!0) (mu_x! (ite (<= m!0 n!) m!0 n!))))
      (a!2 (= (mu_x! (ite (<= m!0 n!) m!0 n!)) undef)))
(let ((a!3 (or (= (pmu_x! m!0) (val 0.0)) (and (= (pmu_x! m!0) undef) a!2))))
(let ((a!4 (=> (and (>= m!0 1) (<= m!0 (* 8 n!q8)))
               (ite (and (>= 1 1) (<= 1 n!) (<= m!0 n!)) a!1 a!3))))
(let ((a!5 (not (and (>= n! 1) (>= (* 8 n!q8) n!) a!4))))
  (or a!5))))))
(check-sat)
