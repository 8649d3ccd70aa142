"""The Relax pass family: the catalogue of Relax passes and IR mutations, and their phase contracts."""
