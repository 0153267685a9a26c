"""Experience's pure rules: experiences, their confidence, how feedback moves it."""
