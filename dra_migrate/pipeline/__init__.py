"""Files through the stages: many (``many_files``), one (``one_file``), and the
suppressions applied to what they found (``suppress``)."""
