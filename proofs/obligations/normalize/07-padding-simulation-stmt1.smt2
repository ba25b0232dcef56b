; program: examples/normalize.teil
; obligation: padding-simulation-stmt1
; lemma: report Lemma 6, Theorem 3 (true form)
; statement: 1: s = red x
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-datatypes ((Value 0)) (((val (real Real)) (undef))))
(declare-fun n! () Int)
(declare-fun n!q8 () Int)
(declare-fun usum!0 () Value)
(declare-fun sum!0 () Value)
(assert (>= n! 1))
(assert (< (* 8 (- n!q8 1)) n!))
(assert (<= n! (* 8 n!q8)))
(assert true)
(assert (let ((a!1 (ite (and (>= 1 1) (<= 1 n!))
                (= sum!0 usum!0)
                (or (= sum!0 (val 0.0)) (and (= sum!0 undef) (= usum!0 undef))))))
  (=> true a!1)))
(assert (or (not (= sum!0 usum!0))))
(check-sat)
