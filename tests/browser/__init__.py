"""Browser tests: a package, so their module names cannot clash with unit tests of the same name."""
