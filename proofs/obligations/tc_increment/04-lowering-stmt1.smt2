; program: examples/tc_increment.teil
; obligation: lowering-stmt1
; lemma: section 4.1 (translation validation)
; statement: 1: A = B
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-datatypes ((Value 0)) (((val (real Real)) (undef))))
(declare-fun m! () Int)
(declare-fun mu_B! (Int) Value)
(declare-fun k1!0 () Int)
(assert (>= m! 1))
(assert (let ((a!1 (and (and (>= k1!0 1) (<= k1!0 m!))
                (not (and (>= k1!0 1) (<= k1!0 m!))))))
  (or a!1
      (and (and (>= k1!0 1) (<= k1!0 m!)) (distinct (mu_B! k1!0) (mu_B! k1!0))))))
(check-sat)
