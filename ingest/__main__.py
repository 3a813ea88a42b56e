from ingest.cli import app

app(prog_name="ingest")
