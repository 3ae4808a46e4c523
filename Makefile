# The course's commands. `make lab` to study, `make test` to prove everything works.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# Port of `make lab`, `make site-serve` and `make lite-serve` (one at a time on 8888, or give each its own:
# `make site-serve PORT=8001`). A busy default port moves to the next free one (JupyterLab does this
# itself; tools/serve.py for the two static sites); a busy port you set with PORT= is an error naming it.
PORT   ?= 8888
STRICT_PORT := $(if $(filter command line environment,$(origin PORT)),--strict,)
# JupyterLab refuses to run as root unless told; containers and CI machines often are root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: lab notebook test test-fast test-class stress exercises bench lint clean-venv help

help:
	@echo "make lab        open the course in JupyterLab (creates .venv on first run)"
	@echo "make notebook   the same in Jupyter Notebook 7"
	@echo "make test       run every test: library, notebooks, exercises, browser"
	@echo "make test-fast  every test except the browser ones and the exhaustive sweeps (slow)"
	@echo "make test-class a class's routes end to end: graded work against every cheat, the hub (slow)"
	@echo "sudo make hub   a JupyterHub for a test class on port HUB_PORT (8000): accounts, nbgrader, idle culler"
	@echo "sudo make bench-class N=40   a class of N on that hub: Run All at once, slider latency, memory"
	@echo "make exercises  regenerate exercises/ from solutions/"
	@echo "make lint       check the explorers' page scripts (lecture_lib/**/*.js) with ESLint (npm)"
	@echo "make bench      print the performance figures (import, notebooks, sliders; BENCH_QUICK=1: chapters 1, 4, 5)"
	@echo "make flashcards write build/llm-serving-math.apkg, an Anki deck of the course (FLASHCARDS=path to change)"
	@echo "make present CH=01  one chapter as a Voila app sized for a 1280x800 projector"
	@echo "make site       the chapters, executed, as a static HTML site in site/ (offline)"
	@echo "make lite       the course as a JupyterLite site in lite/ (Python in the browser)"
	@echo "make slides     reveal.js slides of each chapter in slides/ (offline; npm once for reveal.js)"
	@echo "make site-serve / make lite-serve   serve site/ or lite/ on PORT (default 8888, or the next free one)"
	@echo "make clean-venv delete .venv (the next make target rebuilds it)"
	@echo "teaching (nbgrader, JupyterHub, schedules, levels): docs/instructor.md; library reference: docs/library.md"

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Editable installs use setuptools' strict mode: a link tree of the package's own files under
# build/, put on sys.path by a plain .pth entry. `import lecture_lib` then finds the real package,
# __init__ and all, from any directory (a notebook's kernel starts in notebooks/), with no import
# hook that a same-named directory elsewhere could shadow (a stray lecture_lib/ without __init__.py
# would become a namespace package ahead of setuptools' default finder). The link tree holds the
# modules that existed at install time, so the install is redone whenever the list of modules changes.
EDITABLE = --config-settings editable_mode=strict
MODULES_STAMP := $(VENV)/.modules-$(shell find lecture_lib -name '*.py' 2>/dev/null | sort | cksum | cut -d' ' -f1)

$(MODULES_STAMP): | $(PY)
	rm -f $(VENV)/.modules-*
	touch $@

$(VENV)/.course-installed: pyproject.toml $(MODULES_STAMP) | $(PY)
	$(PY) -m pip install --quiet $(EDITABLE) -e '.[lab]'
	touch $@

# The test and lite extras bring JupyterLite's Pyodide-kernel extension (for `make lite`); it only works
# inside a JupyterLite site, and in this environment's own JupyterLab it would log errors on every page.
# (Disabling it is harmless where it is not installed.)
QUIET_LITE_EXTENSION = $(VENV)/bin/jupyter labextension disable --level=sys_prefix \
	@jupyterlite/pyodide-kernel-extension >/dev/null 2>&1

$(VENV)/.test-installed: pyproject.toml $(MODULES_STAMP) | $(PY)
	$(PY) -m pip install --quiet $(EDITABLE) -e '.[lab,test]'
	$(QUIET_LITE_EXTENSION)
	touch $@ $(VENV)/.course-installed

# Any other extra (flashcards, present, site, lite), on top of the lab: `$(VENV)/.NAME-installed`.
$(VENV)/.%-installed: pyproject.toml $(MODULES_STAMP) | $(PY)
	$(PY) -m pip install --quiet $(EDITABLE) -e '.[lab,$*]'
	$(QUIET_LITE_EXTENSION)
	touch $@ $(VENV)/.course-installed

# The start page is JupyterLab's default URL, so both the browser JupyterLab opens and the tokened URL
# it prints land on notebooks/00_start_here.ipynb. (A path argument, `jupyter lab FILE`, opens FILE only
# in a browser JupyterLab launches itself; the printed URL and `/` still go to the Launcher.)
START_PAGE := notebooks/00_start_here.ipynb
# No news prompt and no update check: the course runs offline, and the prompt's toast covered explorer readouts.
# (news_url=None stops the fetch, but JupyterLab still asks "get notified about official Jupyter news?" until the
# setting is chosen: tools/lab_settings/overrides.json chooses it.)
SERVER_FLAGS = --ServerApp.ip=127.0.0.1 --ServerApp.port=$(PORT) \
	$(if $(STRICT_PORT),--ServerApp.port_retries=0,) \
	--ServerApp.root_dir="$(CURDIR)" $(ROOT_FLAG)
LAB_FLAGS = $(SERVER_FLAGS) --LabApp.default_url=/lab/tree/$(START_PAGE) \
	--LabApp.news_url=None --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate \
	--LabApp.app_settings_dir="$(CURDIR)/tools/lab_settings"

lab: $(VENV)/.course-installed
	@$(PYTHON) tools/serve.py --check --port $(PORT) $(STRICT_PORT)
	$(VENV)/bin/jupyter lab $(LAB_FLAGS)

# Jupyter Notebook 7, the other front end: the same server flags, landing on the start page as well (its own
# default is the file list, /tree).
NOTEBOOK_FLAGS = $(SERVER_FLAGS) --JupyterNotebookApp.default_url=/notebooks/$(START_PAGE)

notebook: $(VENV)/.course-installed
	@$(PYTHON) tools/serve.py --check --port $(PORT) $(STRICT_PORT)
	$(VENV)/bin/jupyter notebook $(NOTEBOOK_FLAGS)

# Both run in parallel (pytest-xdist; tests/conftest.py keeps each file on one worker, the chapters' browser walks
# one after another, and shares out the notebook runs test by test). Each worker brings its own kernels, servers and
# browser, so the machine is busy with one worker per core already: on the 2-core machine `make test` took 595 s with
# 2 workers, 508 s with 3 and 577 s with 4 (2026-12-04), so it starts one more worker than there are cores (at most
# 12). TEST_WORKERS=1 runs it in one process.
TEST_WORKERS ?= $(shell n=$$(( $$(nproc 2>/dev/null || echo 2) + 1 )); [ $$n -gt 12 ] && n=12; echo $$n)

# Python writes its compiled modules (and pytest its rewritten test modules) even where the environment says not to
# (PYTHONDONTWRITEBYTECODE, set in some containers): otherwise each of the run's workers, kernels and servers
# compiles the course and the tests again, about 0.5 s per kernel and 6 s per worker on the 2-core machine.
TEST_ENV = MPLBACKEND=Agg PYTHONDONTWRITEBYTECODE=

test: $(VENV)/.test-installed
	$(TEST_ENV) $(PY) -m pytest -n $(TEST_WORKERS) -m "not classroom and not stress"

test-fast: $(VENV)/.test-installed
	$(TEST_ENV) $(PY) -m pytest -n $(TEST_WORKERS) -m "not browser and not slow and not classroom and not stress"

# A class's routes end to end, too long for `make test`'s ten minutes: the nbgrader route with one pretend student
# per way of scoring without solving (the autograde sandbox needs bubblewrap: apt-get install bubblewrap), and the
# JupyterHub a class logs in to; then the stress tests (tests/test_stress.py: every chapter, autograde and Voila
# under two busy loops, STRESS_RUNS times each), one at a time, after the rest: they set the machine's load
# themselves, and a hub test beside them would run under it too. .ci/run runs it after `make test`.
STRESS_RUNS ?= 5
test-class: $(VENV)/.test-installed
	$(TEST_ENV) $(PY) -m pytest -n $(TEST_WORKERS) -m "classroom"
	$(TEST_ENV) LECTURE_STRESS_RUNS=$(STRESS_RUNS) $(PY) -m pytest -n 0 -m "stress"

# The issue's full measure of Run All under load (issue 48): every chapter, autograde and Voila, 20 runs each by
# default (about 40 minutes on 2 cores: two runs of each took 4). Times per run land in build/stress/*.json.
RUNS ?= 20
stress: $(VENV)/.test-installed
	$(TEST_ENV) LECTURE_STRESS_RUNS=$(RUNS) $(PY) -m pytest -n 0 -m "stress" -s

exercises: $(VENV)/.course-installed
	$(PY) -m lecture_lib.practice.exercises generate solutions exercises

bench: $(VENV)/.test-installed
	MPLBACKEND=Agg $(PY) tools/bench.py

clean-venv:
	rm -rf $(VENV)

# ---- a class on JupyterHub (issue 47): `sudo make hub` installs (once) and starts a hub for a test class on
# http://127.0.0.1:$(HUB_PORT)/ with configurable-http-proxy, nbgrader and the idle culler (tools/hub.py;
# docs/instructor.md). It creates accounts and runs each user's server as that user, so it needs root.
HUB_PORT     ?= 8000
HUB_STUDENTS ?= 3
HUB_PREFIX   ?= /opt/llm-serving-math
.PHONY: hub hub-install
hub-install:
	/usr/bin/python3 tools/hub.py install --students $(HUB_STUDENTS) --prefix $(HUB_PREFIX)

hub: hub-install
	/usr/bin/python3 tools/hub.py start --port $(HUB_PORT) --prefix $(HUB_PREFIX)

# `sudo make bench-class N="10 20 40"`: N students on the hub, Run All of Chapter 1 at once, then slider moves
# (tools/bench_class.py); prints the table docs/instructor.md's sizing comes from. One student alone is measured too.
N ?= 40
.PHONY: bench-class
bench-class: $(VENV)/.test-installed
	$(PY) tools/bench_class.py --students $(N) --prefix $(HUB_PREFIX)

# ---- flashcards (issue 16): an Anki deck of each chapter's formulas, key numbers and concepts
FLASHCARDS ?= build/llm-serving-math.apkg
.PHONY: flashcards
flashcards: $(VENV)/.flashcards-installed
	$(PY) -m lecture_lib.practice.flashcards $(FLASHCARDS)

# --- Classroom and self-study delivery (issue 16): projector view, static site, JupyterLite ------
# `make present CH=01`: one chapter as a Voila app (code hidden, explorers live) on
# http://127.0.0.1:$(PRESENT_PORT)/, sized for a 1280x800 projector: the `projector` template
# (tools/present/) enlarges text and controls; LECTURE_PRESENT=1 makes lecture_lib.explorers.plots draw
# the figures 1.5x larger, figure text at least 16 px (LECTURE_PRESENT=1.8 for more).
CH           ?= 01
PRESENT_PORT ?= 8866
LECTURE_PRESENT ?= 1
PRESENT_NOTEBOOK = $(firstword $(wildcard notebooks/$(CH)_*.ipynb))

.PHONY: present site lite site-serve lite-serve

# The chapters there are, for the message when CH names none: "00..09".
CHAPTER_NUMBERS = $(sort $(foreach nb,$(wildcard notebooks/[0-9][0-9]_*.ipynb),$(firstword $(subst _, ,$(notdir $(nb))))))
PRESENT_STRICT := $(if $(filter command line environment,$(origin PRESENT_PORT)),--strict,)
# Each page load starts a kernel: one whose page has closed (no connection) is shut down after 2 idle
# minutes, so a morning of reloads does not leave a kernel per visit. nbgrader's lab extension (the grade
# extra) and JupyterLite's have no place in a Voila page, where they only log errors: not loaded.
PRESENT_FLAGS = --Voila.ip=127.0.0.1 --Voila.port_retries=0 --template=projector --theme=light --no-browser \
	--MappingKernelManager.cull_idle_timeout=120 --MappingKernelManager.cull_interval=30 \
	--MappingKernelManager.cull_connected=False \
	--VoilaConfiguration.extension_denylist=@jupyter/nbgrader \
	--VoilaConfiguration.extension_denylist=@jupyterlite/pyodide-kernel-extension

present: $(VENV)/.present-installed
	@test -n "$(PRESENT_NOTEBOOK)" || { echo "no notebooks/$(CH)_*.ipynb: CH is one of \
	$(firstword $(CHAPTER_NUMBERS))..$(lastword $(CHAPTER_NUMBERS)), e.g. make present CH=01"; exit 1; }
	@port=$$($(PYTHON) tools/serve.py --pick --port $(PRESENT_PORT) $(PRESENT_STRICT) --variable PRESENT_PORT) \
		|| exit 1; \
	echo "LECTURE_PRESENT=$(LECTURE_PRESENT) voila $(PRESENT_NOTEBOOK) --port=$$port"; \
	LECTURE_PRESENT=$(LECTURE_PRESENT) JUPYTER_PATH="$(CURDIR)/tools/present" \
		$(PY) tools/present/voila_sliced.py "$(PRESENT_NOTEBOOK)" --port=$$port $(PRESENT_FLAGS)

# `make site`: every chapter executed, as static HTML in site/ (explorer figures as images,
# MathJax bundled); open site/index.html, or `make site-serve`.
site: $(VENV)/.site-installed
	MPLBACKEND=Agg $(PY) tools/build_site.py --output site

site-serve:
	@test -f site/index.html || { echo "no site/index.html: run make site first"; exit 1; }
	$(PYTHON) tools/serve.py site --port $(PORT) $(STRICT_PORT)

# `make lite`: the course as a JupyterLite site in lite/ (Python in the browser tab); `make lite-serve`.
lite: $(VENV)/.lite-installed
	$(PY) tools/build_lite.py --output lite

lite-serve:
	@test -f lite/index.html || { echo "no lite/index.html: run make lite first"; exit 1; }
	$(PYTHON) tools/serve.py lite --port $(PORT) $(STRICT_PORT)

# ---- lint (issue 48): the page scripts shipped beside the explorers (lecture_lib/**/*.js) with ESLint, at the
# versions package-lock.json pins (eslint.config.js says what is checked). npm ci runs only when the lock is newer
# than node_modules, so a second `make lint` needs no network.
node_modules/.package-lock.json: package.json package-lock.json
	@command -v npm >/dev/null || { echo "make lint needs npm (Node.js >= 18.18): apt-get install -y npm"; exit 1; }
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

lint: node_modules/.package-lock.json
	node_modules/.bin/eslint --max-warnings 0 lecture_lib eslint.config.js

# `make slides` (issue 47): one reveal.js deck per chapter in slides/ (the title, the derivations, each explorer's
# figure, the predict questions), executed as `make site` executes the chapters; reveal.js, RequireJS and jQuery
# come from npm once (kept in build/slides-vendor/), then the build and the decks need no network.
.PHONY: slides
slides: $(VENV)/.site-installed
	MPLBACKEND=Agg $(PY) tools/build_slides.py --output slides
