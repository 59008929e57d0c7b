"""Hub publishing: model cards and Hub-ready folders."""
