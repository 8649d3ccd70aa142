"""The campaign directory: campaign.db (SQLite, WAL), corpus/ and findings/."""
