"""A well-known library named with one of its own methods or parts ("pandas groupby two columns",
"numpy argsort descending", "SQLAlchemy lazy loading", "Use axios to post JSON"), and a module's
member written as code ("requests.get", "np.argsort", "console.log"): a question about code.

A library's name alone is a topic ("What is numpy?", "Is lodash still popular?"), and some names
are also a thing or an animal (pandas eat bamboo, a torch lights a path, a flask holds tea): what
makes either a request about code is a word only that library's users say beside it. So each
library has its own list of parts, read among the few words after its name, or before it when
the name ends the sentence ("df groupby agg pandas"). A part is one word as the text splits into
them (lower case, letters, digits and ``_``): "lazy loading" is read at "lazy".

Kept apart from ``code_cues.py`` (which calls :func:`names_a_library_call` from
``asks_for_code``): a table of names, read by lookup, not one more pattern. Linear: each name
found costs a bounded read of its neighbours.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType


def _parts(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Each library's methods, classes and the words its users name its parts by. A word a person's
# day says beside the same name is left out of that library's list: pandas eat, sleep, join a
# group; a torch shines; react to the props is a theatre's.
LIBRARY_PARTS: Mapping[str, frozenset[str]] = MappingProxyType({
    "pandas": _parts(
        "groupby merge concat pivot pivot_table melt read_csv to_csv read_excel to_excel read_json"
        " read_sql loc iloc dataframe dataframes df series reset_index set_index fillna dropna apply"
        " drop_duplicates value_counts resample rolling astype sort_values applymap agg aggregate"
        " explode crosstab multiindex to_datetime dtype dtypes nan columns column"),
    "numpy": _parts(
        "argsort argmax argmin reshape array arrays ndarray broadcasting broadcast vectorize"
        " linspace arange meshgrid einsum matmul concatenate vstack hstack where unique transpose"
        " dtype axis polyfit fft linalg zeros ones random seed slicing indexing mean std nan clip"
        " cumsum dot flatten squeeze expand_dims mask matrix inverse percentile histogram sort"),
    "lodash": _parts(
        "debounce throttle groupby orderby sortby clonedeep merge get set pick omit uniq uniqby"
        " chunk flatten flattendeep map filter reduce isequal memoize keyby countby partition"
        " difference intersection union zip template curry"),
    "axios": _parts(
        "interceptors interceptor get post put delete patch create instance headers header"
        " timeout retry retries cancel abort request response baseurl params config error errors"
        " cors token bearer formdata upload download json await async promise mock defaults"),
    "sqlalchemy": _parts(
        "lazy eager relationship relationships session sessions query queries select join joins"
        " joinedload selectinload engine model models declarative orm migration migrations"
        " alembic column columns foreign commit rollback filter filter_by async mapper metadata"
        " table tables subquery transaction transactions backref hybrid connection pool upsert"),
    "express": _parts(
        "middleware middlewares router routes route server app req res error handler cors body"
        " session static endpoint endpoints api jwt auth passport cookie cookies validation post"
        " get listen port mongoose"),
    "sklearn": _parts(
        "train_test_split train split gridsearchcv randomizedsearchcv pipeline pipelines"
        " cross_val_score cross fit predict predict_proba transform fit_transform standardscaler"
        " minmaxscaler onehotencoder labelencoder randomforestclassifier logisticregression kmeans"
        " pca svm svc confusion classifier classifiers regressor estimator metrics model models"
        " tfidfvectorizer countvectorizer kfold stratifiedkfold simpleimputer columntransformer"),
    "matplotlib": _parts(
        "subplots subplot plot plots scatter hist histogram legend axis axes xticks yticks xlabel"
        " ylabel colorbar colormap figure figsize savefig imshow twinx annotate pyplot plt bar"
        " barh pie grid tight_layout ticks animation backend"),
    "seaborn": _parts(
        "heatmap pairplot barplot boxplot violinplot lineplot scatterplot countplot histplot"
        " kdeplot catplot displot relplot facetgrid palette hue annotations annot regplot"
        " jointplot"),
    "torch": _parts(
        "dataloader dataset tensor tensors nn autograd backward optimizer cuda gpu device"
        " state_dict checkpoint model training loss gradient gradients no_grad module conv2d lstm"
        " embedding batch epoch epochs mps onnx jit ddp lightning"),
    "tensorflow": _parts(
        "model fit callbacks callback layers layer sequential dense tensor tensors dataset"
        " datasets checkpoint early compile predict keras tflite savedmodel gradienttape gpu"
        " embedding lstm conv2d optimizer loss epochs batch"),
    "jquery": _parts(
        "ajax selector selectors click on each animate append toggle val ready event events"
        " fadein fadeout hide getjson plugin plugins validation datatable datatables ui css attr"
        " prop"),
    "bs4": _parts(
        "find_all find select select_one soup parse parser html lxml scrape scraping tag tags"
        " attribute attributes get_text table tables div href links"),
    "django": _parts(
        "queryset querysets orm migration migrations model models view views template templates"
        " admin middleware signal signals serializer serializers form forms url urls urlpatterns"
        " settings rest drf channels celery filter foreignkey manytomany app apps auth"
        " authentication login staticfiles csrf session sessions fixture fixtures field fields"
        " annotate aggregate prefetch_related select_related"),
    "flask": _parts(
        "route routes blueprint blueprints jinja jinja2 endpoint endpoints cors wtforms request"
        " jsonify gunicorn sqlalchemy"),
    "fastapi": _parts(
        "dependency dependencies depends route routes endpoint endpoints pydantic background"
        " middleware websocket websockets cors router uvicorn response_model response request"
        " oauth2 jwt startup lifespan testclient async upload"),
    "next": _parts(
        "getserversideprops getstaticprops router routes route api middleware image app page"
        " pages server components component ssr ssg isr layout fetch revalidate dynamic"),
    "react": _parts(
        "usestate useeffect usememo usecallback useref usereducer usecontext jsx tsx hooks hook"
        " component components redux rerender rerenders"),
    "tokio": _parts(
        "spawn spawn_blocking blocking select runtime mpsc channel channels async task tasks join"
        " join_all main sleep timeout mutex rwlock tcplistener stream streams io"),
    "serde": _parts(
        "serialize deserialize serialization deserialization derive json rename enum enums"
        " untagged flatten skip default struct structs field fields yaml toml custom"),
    "boto3": _parts(
        "s3 client resource upload_file download_file presigned bucket buckets dynamodb session"
        " paginator lambda sqs sns ec2 credentials put_object get_object list_objects iam"
        " cloudwatch"),
    "opencv": _parts(
        "imread imshow imwrite resize contour contours threshold canny videocapture cvtcolor"
        " cascade haar webcam camera frame frames image images video mask blur gaussian edge"
        " edges detect detection rectangle warp perspective homography aruco"),
})

# Each spelling of a name (lower case) and the library it is. Express and Next only with ".js"
# ("Express my thanks", "next week"); keras reads as TensorFlow's, PyTorch as torch.
_SPELLINGS = MappingProxyType({
    "pandas": "pandas", "numpy": "numpy", "lodash": "lodash", "axios": "axios",
    "sqlalchemy": "sqlalchemy", "express.js": "express", "expressjs": "express",
    "scikit-learn": "sklearn", "sklearn": "sklearn", "matplotlib": "matplotlib",
    "seaborn": "seaborn", "torch": "torch", "pytorch": "torch", "tensorflow": "tensorflow",
    "keras": "tensorflow", "jquery": "jquery", "beautifulsoup": "bs4", "beautiful soup": "bs4",
    "bs4": "bs4", "django": "django", "flask": "flask", "fastapi": "fastapi", "next.js": "next",
    "nextjs": "next", "react": "react", "tokio": "tokio", "serde": "serde", "boto3": "boto3",
    "opencv": "opencv", "cv2": "opencv",
})
# The name's edges are ASCII ones: a Chinese or Japanese letter is a word character too, and
# "用pandas怎么分组" names pandas as "pandas groupby" does.
_NAME = re.compile(
    r"(?<![a-z0-9_.])(?:" + "|".join(re.escape(s).replace(r"\ ", r"\s?")
                                for s in sorted(_SPELLINGS, key=len, reverse=True))
    + r")(?![a-z0-9_]|\.[a-z0-9_])")
# How many words beside a name are read, and how far (a sentence's end comes first)
_WORDS = 3
_REACH = 40
_WORD = re.compile(r"[a-z0-9_]+")
_SENTENCE_END = re.compile(r"[?!\n;]|\.(?![a-z0-9_])")
# "a column about pandas": a name after "about" is a topic, the words before it not its parts
_ABOUT = re.compile(r"\babout\s+\Z")
_ENDS_SENTENCE = re.compile(r"\s*(?:$|[?!.\n;,:)])")

# A module's member written as code: a common module's alias or a JavaScript global, a dot, and
# a name ("np.argsort", "df.groupby", "requests.get", "console.log", "$.ajax", "_.debounce").
# A domain, an address or a file names no such module ("google.com", "sam.smith@example.com",
# "document.pdf"). Read from the dot: prose's dots are followed by a blank, so most texts hold
# no place to look at (a pattern starting at the alias was tried at every word: 10 us on four
# sentences).
_MODULES = _parts(
    "np pd df plt sns tf torch nn requests os sys json re math cv2 itertools collections datetime"
    " subprocess asyncio console document window object array promise _ $")
_DOT = re.compile(r"\.(?=[a-z_])")
_ALIAS_BEFORE = re.compile(r"(?:^|[^a-z0-9_.@$])([a-z0-9_]+|\$)\Z")
_MEMBER_AFTER = re.compile(
    r"\.(?!(?:pdf|docx?|txt|rtf|odt|csv|xlsx?|pptx?|png|jpe?g|gif|svg|zip|md|html?|json|xml|ya?ml"
    r"|py|js|ts|exe|mp[34]|mov|wav)\b)[a-z_]\w*(?!@|\.[a-z])")


# The aliases that are also English nouns a sentence ends on. A JavaScript global's members
# start lower case ("Math.max", "Promise.all", "document.getElementById") or are all capitals
# ("Math.PI"), so one written as a capital and small letters is the next sentence's first word,
# typed with no blank after the full stop ("I hate math.Why is it so hard?").
_PROSE_ALIASES = _parts("math object window document console promise array")
_SENTENCE_START = re.compile(r"[A-Z][a-z]")
# ... and one typed all lower case: a word that opens a clause, then its subject ("the
# window.then she slept", "math.then I failed"); "promise.then callback", "window.then is
# undefined" name the member.
_CLAUSE_START = re.compile(
    r"\.(?:then|and|but|so|after|afterwards|later|now|next|also|still|yet|because|when|while)"
    r"\s+(?:i|you|he|she|we|they|it|my|our|his|her|their|there|again)\b")


def _writes_a_member(text: str, folded: str) -> bool:
    for dot in _DOT.finditer(folded):
        alias = _ALIAS_BEFORE.search(folded, max(0, dot.start() - 16), dot.start())
        if (alias and alias.group(1) in _MODULES and _MEMBER_AFTER.match(folded, dot.start())
                and not (alias.group(1) in _PROSE_ALIASES
                         and (_SENTENCE_START.match(text, dot.end())
                              or _CLAUSE_START.match(folded, dot.start())))):
            return True
    return False


# The spellings that are also a thing, an animal, a newsroom, a person or a verb, each with the
# words that thing's talk puts within ``_THING_REACH`` characters of it: there, the name is the
# thing, whatever part-like word follows ("Baby pandas melt my heart", "Which tiki torch model
# is best for the garden?", "Serve this beautiful soup at the table", "Django Reinhardt's
# views"). Its parts are often everyday words too (series, model, table, post, views, hook).
_THING_REACH = 60
_THINGS: Mapping[str, re.Pattern[str]] = MappingProxyType({
    spelling: re.compile(r"\b(?:" + "|".join(words.split()) + r")\b")
    for spelling, words in {
        "pandas": "zoos? bamboo bab(?:y|ies) giant\\s+pandas red\\s+pandas wild cute cubs? bears? snow"
                  " hearts? documentary bbc chengdu sichuan fur climb\\w* endangered",
        "torch": "tiki blow kitchen olympic relay flames? fire garden creme brulee camping"
                 " flashlight propane butane welding solder\\w* candles?",
        "beautiful soup": "serv(?:e|es|ed|ing) recipes? bowls? dinner lunch cook(?:s|ed|ing)?"
                          " tast(?:e|es|ed|y) broth delicious vegetables? carrots? onions? lewis"
                          " carroll turtle",
        "axios": "reported reporters? journalists? election headlines? newsletters? scoop",
        "django": "reinhardt unchained tarantino jazz guitar\\w* foxx",
        "react": "fish fishing bait anglers?",
        "flask": "tea coffee water hip thermos whiske?y drinks? hik(?:e|es|ed|ing) chemistry",
    }.items()
})


# The parts of those libraries that are everyday words too: beside the thing's words they are
# the thing's ("pandas rolling in the snow"); "groupby" or "dataframe" stays the library's.
_PLAIN_PARTS = _parts(
    "merge pivot melt series column columns apply rolling explode aggregate nan model models"
    " training loss gradient gradients module device batch checkpoint embedding lightning find"
    " select soup parse parser tag tags attribute attributes table tables links view views"
    " template templates admin signal signals form forms settings rest channels filter app apps"
    " auth login session sessions field fields fixture fixtures annotate get post put delete"
    " patch create instance headers header timeout retry retries cancel abort request response"
    " params config error errors token upload download mock defaults hooks hook component"
    " components route routes blueprint endpoint endpoints")


# Of those, the ones the thing itself has, said of it with no word of its own near: a newsroom
# posts, responds, requests comment and errs ("What was the Axios response to the hurricane?"),
# a show about pandas is a series, pandas roll and melt hearts, a recipe finds a soup a table, a
# person named Django has views. Only these need a code verb or object beside the name; a part
# the thing never has ("the axios timeout", "django signals", "a pandas pivot", "the torch
# model") is the library's, as it was before decision 266 (review s55rF).
_THING_PARTS: Mapping[str, frozenset[str]] = MappingProxyType({
    "pandas": _parts("series rolling melt column columns"),
    "axios": _parts("response request post put get error errors cancel"),
    "beautiful soup": _parts("soup find select table tables"),
    "django": _parts("view views rest"),
})


# A library's own type converted to data ("convert the pandas series of zoo visits to a list",
# "turn the pandas series into a dict"): a task on its data, whatever the thing's words near.
_CONVERTED = re.compile(
    r"\b(?:convert(?:s|ed|ing)?|turn(?:s|ed|ing)?|cast(?:s|ing)?|transform(?:s|ed|ing)?"
    r"|export(?:s|ed|ing)?)\b[^.?!\n]{0,60}?\b(?:to|into|as)\s+(?:(?:an?|the|python|numpy|plain)\s+)*"
    r"(?:lists?|dicts?|dictionar(?:y|ies)|arrays?|ndarrays?|json|csv|tuples?|sets?|strings?"
    r"|dataframes?|tensors?|ints?|integers?|floats?|datetimes?|parquet|excel)\b")
# A code verb or a code or data object in the sentence: without one, a name that is also a
# thing, a newsroom or a word, named with only a part the thing has too (``_THING_PARTS``), is
# that thing ("What was the Axios response to the hurricane?", "She watched the pandas series
# on Netflix"), where "Why is the axios response empty?" and "How do I read the axios
# response?" ask about the library's.
_CODE_VERB_OR_OBJECT = _parts(
    "read parse fetch send handle log print return returns returned throw throws import install"
    " mock catch call json api apis url endpoint endpoints object objects undefined null empty nan"
    " none status error errors exception exceptions list lists dict dicts array arrays dataframe"
    " dataframes string strings typescript index csv value values key keys function functions"
    " method methods code data row rows duplicates")
_HOW_TO = re.compile(r"\bhow\s+(?:to|(?:do|can|should|would)\s+(?:i|you|we))\b")
_SENTENCE_REACH = 80


def _sentence_of(folded: str, start: int, end: int) -> str:
    """The sentence the name at ``start:end`` stands in, at most ``_SENTENCE_REACH`` characters
    either side of it."""
    before = folded[max(0, start - _SENTENCE_REACH):start]
    ends = list(_SENTENCE_END.finditer(before))
    after = folded[end:end + _SENTENCE_REACH]
    return (before[ends[-1].end():] if ends else before) + folded[start:end] + after[:_cut(after)]


# A name written in Latin letters against a Chinese or Japanese letter is the library (the animal
# is 熊猫, a torch 火炬): with a how-to or a task's word in either language beside it, it is a
# question about its code ("用pandas怎么分组", "pandasで集計したい"); named alone it is a topic
# ("pandas是什么").
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_LETTER = re.compile(f"[{_CJK}]")
_CJK_ASK = re.compile(
    "怎么|怎样|如何|方法|用法|实现|报错|出错|分组|合并|排序|读取|筛选|したい|使い方|やり方|書き方|エラー"
    "|集計|結合|並べ替え|読み込")


def _touches_cjk(folded: str, start: int, end: int) -> bool:
    return bool((start > 0 and _CJK_LETTER.match(folded, start - 1))
                or _CJK_LETTER.match(folded, end))


def _asked_in_cjk(folded: str, start: int, end: int) -> bool:
    return (_touches_cjk(folded, start, end)
            and bool(_CJK_ASK.search(folded, max(0, start - _REACH), end + _REACH)))


# A course or a book about the library is a learner's request ("Django model for beginners")
_A_COURSE = re.compile(r"\bfor\s+(?:beginners|dummies|kids|children|newbies|novices|students)\b"
                       r"|\b(?:course|lessons?|syllabus)\b")


def names_a_library_call(text: str) -> bool:
    """Whether ``text`` names a library with one of its own parts (``LIBRARY_PARTS``) among the
    ``_WORDS`` words after the name, or before it where the name ends the sentence, and is no
    course; or writes a module's member as code."""
    folded = text.lower()
    if len(folded) != len(text):   # a letter whose lower case is longer: the places move
        folded = "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)
    if _writes_a_member(text, folded):
        return True
    for m in _NAME.finditer(folded):
        spelling = re.sub(r"\s+", " ", m.group())
        parts = LIBRARY_PARTS[_SPELLINGS[spelling]]
        if _asked_in_cjk(folded, m.start(), m.end()):
            return True
        after = folded[m.end():m.end() + _REACH]
        after = after[:_cut(after)]
        words = _WORD.findall(after)[:_WORDS]
        thing = _THINGS.get(spelling)
        if thing is not None and not (words and words[0] in parts
                                      and _starts_sentence(folded, m.start())):
            # a name that is also a thing: only a word no day says is a part when the thing's
            # words are near, and no part the thing has too when no code verb or object is,
            # unless the sentence starts with the name and its part ("React hooks for a
            # fishing app") or converts it to data
            # (a name against a Chinese or Japanese letter is the library: the animal is 熊猫)
            sentence = _sentence_of(folded, m.start(), m.end())
            if not _CONVERTED.search(sentence):
                if thing.search(folded, max(0, m.start() - _THING_REACH), m.end() + _THING_REACH):
                    parts = parts - _PLAIN_PARTS
                elif (spelling in _THING_PARTS and not _touches_cjk(folded, m.start(), m.end())
                      and not (_HOW_TO.search(sentence) or any(
                          w in _CODE_VERB_OR_OBJECT for w in _WORD.findall(sentence)))):
                    parts = parts - _THING_PARTS[spelling]
        if any(w in parts for w in words):
            return not _A_COURSE.search(folded)
        if _ENDS_SENTENCE.match(folded, m.end()) and not _ABOUT.search(
                folded, max(0, m.start() - 12), m.start()):
            before = folded[max(0, m.start() - _REACH):m.start()]
            ends = list(_SENTENCE_END.finditer(before))
            before = before[ends[-1].end():] if ends else before
            if any(w in parts for w in _WORD.findall(before)[-_WORDS:]):
                return not _A_COURSE.search(folded)
    return False


def _starts_sentence(folded: str, start: int) -> bool:
    """Whether the name at ``start`` is its sentence's first word (a few blanks may precede)."""
    before = folded[max(0, start - 8):start].rstrip()
    return before[-1:] in (".", "?", "!", "\n", ";", ":") if before else start <= 8


def _cut(segment: str) -> int:
    """Where the sentence ``segment`` starts in ends (its length when it does not)."""
    end = _SENTENCE_END.search(segment)
    return end.start() if end else len(segment)
