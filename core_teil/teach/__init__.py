"""The teaching side: typing derivations, step-by-step traces (paper 000, Fig. 7), and their
renderings for terminals, LaTeX and Jupyter."""
