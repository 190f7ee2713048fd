"""Attack suite: the doctor given hostile or careless input (issue 18); each case failed before its fix."""
