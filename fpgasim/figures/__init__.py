"""Figures: `plots` (the commands' figures) and `style` (matplotlib, colours, panels and
captions shared with the experiment kinds' figures); matplotlib is imported nowhere else
(tests/house/test_one_plotting_module.py)."""
