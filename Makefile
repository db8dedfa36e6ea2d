# Convenience targets; the README's two commands are the scripts they call.
.PHONY: build test reports bench data clean
build:
	bash scripts/build.sh
test:
	bash scripts/run-tests.sh
reports:
	bash scripts/make-reports.sh
data: build
	CTMC=build/cli/ctmc-snn bash scripts/fetch-data.sh
bench: build
	cmake --build build --target benchmarks
clean:
	rm -rf build
