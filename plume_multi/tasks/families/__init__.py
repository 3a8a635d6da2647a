"""The task families: one module each, holding a ``TASKS`` tuple of ``Task`` records (and the
scenario factories they name). A new family is a new module here, named in ``registry.FAMILIES``."""
