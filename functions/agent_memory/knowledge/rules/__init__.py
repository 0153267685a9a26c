"""Knowledge's pure rules: documents and passages, the topic dictionary."""
