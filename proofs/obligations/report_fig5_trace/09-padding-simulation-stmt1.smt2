; program: examples/report_fig5_trace.teil
; obligation: padding-simulation-stmt1
; lemma: report Lemma 6, Theorem 3 (true form)
; statement: 1: s = contr 1 2 (contr 2 3 (prod A B))
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-datatypes ((Value 0)) (((val (real Real)) (undef))))
(declare-fun usum!1 () Value)
(declare-fun sum!1 () Value)
(assert true)
(assert (let ((a!1 (ite (and (and (>= 1 1) (>= 3 1))
                     (and (>= 1 1) (>= 4 1))
                     (and (>= 1 1) (>= 4 1))
                     (and (>= 1 1) (>= 3 1)))
                (= sum!1 usum!1)
                (or (= sum!1 (val 0.0)) (and (= sum!1 undef) (= usum!1 undef))))))
  (=> true a!1)))
(assert (or (not (= sum!1 usum!1))))
(check-sat)
