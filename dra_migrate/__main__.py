from dra_migrate.entry import main

if __name__ == "__main__":
    main()
