; program: examples/tc_increment.teil
; obligation: lowering-stmt2
; lemma: section 4.1 (translation validation)
; statement: 2: A = add A C
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-datatypes ((Value 0)) (((val (real Real)) (undef))))
(declare-fun m! () Int)
(declare-fun real_add! (Real Real) Real)
(declare-fun mu_C! (Int) Value)
(declare-fun k1!0 () Int)
(declare-fun mu_A! (Int) Value)
(assert (>= m! 1))
(assert (let ((a!1 (and (and (>= k1!0 1) (<= k1!0 m!))
                (not (and (>= k1!0 1) (<= k1!0 m!)))))
      (a!2 (val (real_add! (real (mu_A! k1!0)) (real (mu_C! k1!0))))))
(let ((a!3 (ite (and (= (mu_A! k1!0) (val 0.0)) (= (mu_C! k1!0) (val 0.0)))
                (val 0.0)
                a!2)))
(let ((a!4 (ite (or (= (mu_A! k1!0) undef) (= (mu_C! k1!0) undef)) undef a!3)))
  (or a!1 a!1 (and (and (>= k1!0 1) (<= k1!0 m!)) (distinct a!4 a!4)))))))
(check-sat)
