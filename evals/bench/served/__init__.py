"""`sgam bench`: SGAM served over HTTP on a scratch database, measured beside its floors (the
run in http.py, the server it starts, the data it loads, each case and its runner)."""
