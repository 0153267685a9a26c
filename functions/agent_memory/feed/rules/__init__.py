"""The feed's pure rules: change events and their signatures, webhook configuration."""
