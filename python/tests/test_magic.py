"""``%load_ext passlab`` in a real ipykernel, driven through jupyter_client
as a notebook drives it: text, highlighted IR as HTML, tables, charts as
PNG and SVG, the cell's result, and errors as passlab's exceptions."""

import pytest
from jupyter_client.manager import start_new_kernel


@pytest.fixture(scope="module")
def kernel():
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        yield kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def run(kc, code):
    """Executes `code`; returns the reply's content and the iopub messages
    of the request, by type."""
    msg_id = kc.execute(code)
    reply = kc.get_shell_msg(timeout=120)
    assert reply["parent_header"]["msg_id"] == msg_id
    out = []
    while True:
        msg = kc.get_iopub_msg(timeout=30)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
        out.append((msg["msg_type"], msg["content"]))
    return reply["content"], out


def test_cells_render_as_passlabs_kernel(kernel):
    content, _ = run(kernel, "%load_ext passlab")
    assert content["status"] == "ok"
    cell = (
        "%%passlab\n"
        ":module sq --lang c\n"
        "int sq(int x) { return x * x; }\n"
        ".\n"
        ":run mem2reg,instcombine\n"
        ":show sq\n"
    )
    content, msgs = run(kernel, cell)
    assert content["status"] == "ok", content
    results = [c for t, c in msgs if t == "execute_result"]
    assert len(results) == 1
    data = results[0]["data"]
    assert "define dso_local i32 @sq(i32 noundef %x)" in data["text/plain"]
    assert "<span" in data["text/html"]  # highlighted, as the kernel shows IR
    # The session lives on between cells; a line magic sees the module.
    content, msgs = run(kernel, "%passlab :stats")
    assert content["status"] == "ok"
    result = [c for t, c in msgs if t == "execute_result"][0]["data"]
    assert "<table" in result["text/html"]
    assert "sq" in result["text/plain"]


def test_a_chart_is_displayed_as_images(kernel):
    run(kernel, "%load_ext passlab")
    cell = (
        "%%passlab\n"
        ":module loop --lang c\n"
        "int sum(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }\n"
        ".\n"
        ":instrument ir-size\n"
        ":run O2\n"
        ":plot ir-size\n"
    )
    content, msgs = run(kernel, cell)
    assert content["status"] == "ok", content
    images = [c["data"] for t, c in msgs if t in ("display_data", "execute_result") and "image/png" in c["data"]]
    assert images and "image/svg+xml" in images[0]


def test_errors_are_passlabs_and_stop_the_cell(kernel):
    run(kernel, "%load_ext passlab")
    content, msgs = run(kernel, "%%passlab\n:run instcombin\n:show sq\n")
    assert content["status"] == "error"
    assert content["ename"] == "UnknownPassError"
    assert "unknown pass 'instcombin'; did you mean 'instcombine'?" in content["evalue"]
    assert not [c for t, c in msgs if t == "execute_result"]
    # Python sees the class.
    content, msgs = run(kernel, "import passlab\ntry:\n    get_ipython().run_line_magic('passlab', ':run nosuch')\nexcept passlab.Error as e:\n    print(isinstance(e, passlab.UnknownPassError), isinstance(e, passlab.Error))")
    assert content["status"] == "ok"
    text = "".join(c.get("text", "") for t, c in msgs if t == "stream")
    assert text.strip() == "True True"
