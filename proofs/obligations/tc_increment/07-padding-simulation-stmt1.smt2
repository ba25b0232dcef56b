; program: examples/tc_increment.teil
; obligation: padding-simulation-stmt1
; lemma: report Lemma 6, Theorem 3 (true form)
; statement: 1: A = B
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-datatypes ((Value 0)) (((val (real Real)) (undef))))
(declare-fun m! () Int)
(declare-fun m!q8 () Int)
(declare-fun k1!0 () Int)
(declare-fun mu_B! (Int) Value)
(declare-fun pmu_B! (Int) Value)
(assert (>= m! 1))
(assert (< (* 8 (- m!q8 1)) m!))
(assert (<= m! (* 8 m!q8)))
(assert (and (>= k1!0 1) (<= k1!0 (* 8 m!q8))))
(assert (let ((a!1 (= (pmu_B! k1!0) (mu_B! (ite (<= k1!0 m!) k1!0 m!))))
      (a!2 (= (mu_B! (ite (<= k1!0 m!) k1!0 m!)) undef)))
(let ((a!3 (or (= (pmu_B! k1!0) (val 0.0)) (and (= (pmu_B! k1!0) undef) a!2))))
  (=> (and (>= k1!0 1) (<= k1!0 (* 8 m!q8)))
      (ite (and (>= k1!0 1) (<= k1!0 m!)) a!1 a!3)))))
(assert (let ((a!1 (= (pmu_B! k1!0) (mu_B! (ite (<= k1!0 m!) k1!0 m!))))
      (a!2 (= (mu_B! (ite (<= k1!0 m!) k1!0 m!)) undef)))
(let ((a!3 (or (= (pmu_B! k1!0) (val 0.0)) (and (= (pmu_B! k1!0) undef) a!2))))
(let ((a!4 (not (ite (and (>= k1!0 1) (<= k1!0 m!)) a!1 a!3))))
  (or a!4)))))
(check-sat)
