"""Imported first by the parse fork server (never elsewhere): the server dies with the ingest process
even while it is still importing the parsers, so a killed ingest leaves no process behind."""

from ingest.worker import die_with_parent

die_with_parent()
