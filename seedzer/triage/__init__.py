"""Triage of campaign findings: reduction, standalone reproducers and bug-report drafts."""
