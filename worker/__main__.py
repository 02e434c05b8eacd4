from recovery.worker.cli import main

# Guarded: the pyslurm backend's child processes (multiprocessing's spawn) import the parent's
# main module again, and must not start a second worker when they do.
if __name__ == "__main__":
    main()
