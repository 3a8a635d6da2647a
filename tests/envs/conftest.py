"""Tests of the environment APIs. ``single_agent_reference.py`` here is the plain reference of the
single-agent contract; pytest puts this folder on ``sys.path`` for the tests below it."""
