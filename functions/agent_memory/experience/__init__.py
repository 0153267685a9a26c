"""Experience: feedback on what an agent learned from outcomes."""
