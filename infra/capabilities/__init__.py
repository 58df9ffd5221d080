"""One construct per capability of a Baton team environment."""
