"""``python -m thatchlab.cli``: the same as the ``thatchlab`` command."""

from thatchlab.cli import main

if __name__ == "__main__":
    main()
