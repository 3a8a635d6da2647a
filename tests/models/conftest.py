"""Tests of the model library. ``models_reference.py`` here is the plain NumPy reference of every
model (found by model class); pytest puts this folder on ``sys.path`` for the tests below it."""
