"""MTRAG generation (`--bench mtrag`): tasks, generation settings, the judge layer, IDK conditioning and
the paper's breakdowns. Kept import-light: the pytest plugin uses `conditioning` alone."""
