"""Update judges: models that read an older and a newer statement together (`ports.UpdateJudge`)."""
